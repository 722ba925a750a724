"""The bottom floor: the vocabulary every layer shares (the data model, the error family, the data dir's
layout and the home rule, safe text, the writer's lock, times, counts, the last search). It imports
nothing of Voyager's above it (tests/test_floors.py).
"""
