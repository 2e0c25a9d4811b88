"""The data layer: sources, download, readers per dataset, tokenisation, preprocessing."""
