"""Moving in and out: the five seed systems' databases imported and exported (`seed_io`), and backups."""
