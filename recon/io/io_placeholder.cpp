// Replaced by the readers and writers.
