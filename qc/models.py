"""Workers, qualification, quality flags, reviews and agreement: issues 4 and 5."""
