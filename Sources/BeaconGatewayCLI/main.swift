print("beacon-gateway: under construction")
