"""API tokens: minting and revoking them (`services`), the `/api/v1/tokens/` routes (`views`) and the
first-run credentials (`credentials`). An adapter: it may import the apps (a session token names a session)."""
