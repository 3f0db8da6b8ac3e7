"""The skill library: one public skill per module, grown by lyra's learning loop, never by hand."""
