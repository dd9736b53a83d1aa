"""Test helpers shared across the suite and the bench scripts (no Django imports at module level)."""
