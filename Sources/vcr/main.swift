print("vcr: not yet")
