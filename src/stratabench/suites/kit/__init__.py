"""What every study package shares: the suite base, the run's plan, stores by URL, the report kit."""
