"""What reverse and forward mode share."""
