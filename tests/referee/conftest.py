"""Hypothesis profiles for the referee suite.

``referee`` (the default) keeps the whole suite well under a minute on two cores; set
``HYPOTHESIS_PROFILE=referee-thorough`` for a longer search before a release.
"""

import os

from hypothesis import settings

settings.register_profile("referee", deadline=None, max_examples=100, derandomize=False)
settings.register_profile("referee-thorough", deadline=None, max_examples=2_000, derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "referee"))
