"""The checker: it knows a model only through model.interface."""
from model import compiled

compiled.install()  # before checker.search.bfs and the other compiled modules can be imported
