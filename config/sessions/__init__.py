"""Sign-in sessions kept in PostgreSQL (or the demo's SQLite) with their user's id beside
them, so that one statement reads a request's session and its signed-in user together.
`backend` is the session engine (settings.SESSION_ENGINE)."""
