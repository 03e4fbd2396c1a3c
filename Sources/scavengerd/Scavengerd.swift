print("scavengerd")
