"""The base layer: what every app builds on (API base classes, fields, errors, token scopes, money,
environment, database helpers, the admin's base classes). It imports no app and no adapter; the import
contract in pyproject.toml (`make lint`) holds it to that."""
