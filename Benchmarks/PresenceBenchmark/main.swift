print("presence benchmark: not yet written")
