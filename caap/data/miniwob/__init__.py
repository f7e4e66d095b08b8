"""MiniWoB++ training data: labels from the page's DOM at generation time (never at run time)."""
