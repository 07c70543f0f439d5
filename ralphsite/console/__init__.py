"""The operator's console beyond each app's admin: the dashboard that is the admin's index."""
