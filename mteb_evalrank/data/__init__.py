"""Data building: raw sources -> Hub folders and the local datasets cache."""
