"""The I3 check of the tests is the product's own: :func:`rummy.invariants.i3_problems`
(non-interference: a seat's view must not change when what is hidden from it changes)."""

from rummy.invariants import i3_problems

__all__ = ["i3_problems"]
