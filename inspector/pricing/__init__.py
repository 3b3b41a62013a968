"""What a session cost and what a compaction saves (``cost``), from the price table of each model a
session names, kept between runs (``table``)."""
