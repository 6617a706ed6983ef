"""What happened: the JSONL results log and its records, the scanner and index that read it back, the views
`oac results` prints, `oac results merge` and the HTML report. Imports `model` only; knows nothing of doit."""
