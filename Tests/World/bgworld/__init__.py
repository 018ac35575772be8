"""bgworld: a virtual Bluetooth LE world (tags at distances, a door gateway's controller)
served over H4/TCP, built on Google's Bumble. See README.md."""
