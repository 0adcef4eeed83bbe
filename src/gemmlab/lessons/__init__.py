"""The fourth seed article's experiments as runnable lessons: kernels, variants, checks, verdicts.

``registry`` lists them; ``base`` says what a lesson is; ``verdict`` (pure) judges measured
variants against the article; ``run`` measures them on the GPU through the bench harness.
"""
