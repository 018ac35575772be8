"""The same tags on Google RootCanal 1.13.0 (the faithful link layer), see __main__.py."""
