"""Print docs/config.md, the config reference, from the config's field docstrings:

python scripts/config_doc.py > docs/config.md
"""

from neurocheckers.experiment.config_doc import config_reference

if __name__ == "__main__":
    print(config_reference(), end="")
