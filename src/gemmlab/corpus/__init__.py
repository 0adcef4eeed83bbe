"""A labelled diagnosis corpus: real captures, their truth set from first principles, and scoring."""
