"""The real-model tier (README, "Real-model tier"): SmolLM2 on llama-server behind a fault proxy."""
