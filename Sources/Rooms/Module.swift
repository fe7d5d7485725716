// Rooms module: see README Design.
