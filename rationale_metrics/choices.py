"""The named choices and defaults of the scorers' options.

Here, apart from the modules that use them, so that the command line can offer them
without importing numpy and the readers: each subcommand then imports what it runs.
"""

SPLITS = ("train", "val", "test")

# The fine-grained interpretability benchmark's tasks and languages.
TASKS = ("sentiment", "similarity", "reading_comprehension")
LANGUAGES = ("en", "zh")

# How an instance with several gold rationale sets picks the one it is scored against.
GOLD_CHOICES = ("greedy_union", "best_single_set")
# Token F1s compared as the public code does (floats) or as exact fractions.
COMPARISONS = ("float", "exact")

DEFAULT_IOU_THRESHOLDS = (0.5,)
DEFAULT_AOPC_THRESHOLDS = (0.01, 0.05, 0.1, 0.2, 0.5)
