"""Test helpers shared across layers (local servers, fixtures)."""
