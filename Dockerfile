FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY . .
RUN pip install --no-cache-dir -c requirements/constraints.txt . \
    && DJANGO_SETTINGS_MODULE=config.settings.local python manage.py collectstatic --noinput
# The processes run as an unprivileged user: a flaw in the web app or a parser then cannot
# rewrite the code or the image. The media folder is made here and owned by that user, so a
# named volume mounted on it (docker-compose.yml) starts with that owner and stays writable.
RUN useradd --system --uid 10001 --home-dir /app --no-create-home workbench \
    && mkdir -p /data/media && chown workbench:workbench /data/media
USER workbench
EXPOSE 8000
CMD ["gunicorn", "config.wsgi:application", "-c", "config/gunicorn.conf.py"]
