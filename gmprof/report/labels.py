"""The labels a count carries (the project's first rule: a count is right or labelled)."""

EXACT = "exact"
THRESHOLDED = "thresholded"  # saturated at the threshold: printed >=THR
SAMPLED = "sampled"  # counted on sampled threads, scaled by 1/rate
APPROXIMATE = "approximate"
