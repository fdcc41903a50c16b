"""Django-free library: read and write ERASER data, and score explainers against it."""

__version__ = "0.1.0"
