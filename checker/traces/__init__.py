"""Traces: the ITF format (itf), replaying a trace against a model (replay), rendering to text (render)."""
