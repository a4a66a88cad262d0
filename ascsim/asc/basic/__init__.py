"""The basic API: data movement, vector ops, synchronisation and system registers."""
