"""The API's blueprints, one per resource."""
