"""Issue 28 item 5 (SPEC 12.4): agents built where the exporter does not look first - a factory
module, a class's method, a module imported by the one exported, two graphs whose builders share a
variable name - each finding located at the user's own line."""
