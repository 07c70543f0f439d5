"""SQL that migrations run, frozen: a migration must do the same thing however the live code and
models change later, so it never imports them. Never edit a module here that a migration imports;
write the next version instead. (A package: Django's migration loader skips it.)"""
