"""Pure analysis functions over parsed records: no files, no devices."""
