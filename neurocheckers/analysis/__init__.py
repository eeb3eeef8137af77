"""Reading runs back: plots and tables."""
