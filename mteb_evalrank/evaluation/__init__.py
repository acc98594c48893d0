"""Evaluation maths: pure functions over embeddings."""
