"""ERASER export, datasheets and explainer runs: issues 6 and 7."""
