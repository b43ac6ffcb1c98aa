"""Lessons and the annotated RFC: the curriculum as data, and what turns it into traces.

Lessons (lessons/NN-name.toml) and RFC annotations (lessons/rfc/<number>.toml) are data a
teacher writes without Python; this package reads and checks them strictly (every error
names the file and line), records a lesson's scenario into a trace, finds the steps its
notes and checkpoints select, checks learners' answers, and says which RFC sections the
lessons demonstrate. See docs/lessons.md for the format.
"""
