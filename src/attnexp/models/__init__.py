"""Models: flat attention classifiers now; hierarchical (HAN/FLAN) and QA/NLI models follow (issue 3)."""
