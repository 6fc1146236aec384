"""Shapes of everything that crosses a process boundary: pydantic models and constants, no I/O."""
