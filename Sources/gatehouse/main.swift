print("gatehouse")
