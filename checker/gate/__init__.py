"""The gate (gate: every row of spec/gate.toml and its expected outcome) and mutation analysis
(mutation: small mistakes in a model's code, and which rows notice them)."""
