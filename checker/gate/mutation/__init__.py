"""Mutation analysis of a model (`kcheck mutate`): operators, in-memory imports, the analysis,
judgements on survivors and the reports."""
