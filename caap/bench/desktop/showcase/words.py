"""The words caap's showcase windows draw their labels from (``gtk3.py``, ``qt5.py``): run by the
system Python beside them, which finds this file in their directory."""

WORDS = ("Network", "Display", "Sound", "Printers", "Keyboard", "Mouse", "Privacy", "Sharing", "Backups",
         "Updates", "Users", "Fonts", "Colours", "Power", "Storage", "Accounts", "Search", "Camera",
         "Documents", "Music", "Pictures", "Videos", "Downloads", "Projects", "Archive", "Templates",
         "Invoices", "Reports", "Drafts", "Contacts", "Calendar", "Tasks", "Notes", "Bookmarks", "History",
         "Layers", "Brushes", "Filters", "Effects", "Channels", "Paths", "Guides", "Grid", "Rulers")
NAMES = ("Ada", "Grace", "Linus", "Margaret", "Alan", "Edsger", "Barbara", "Ken", "Dennis", "Frances",
         "Rosa", "Kofi", "Mei", "Ravi", "Olga", "Tomás", "Yuki", "Amara", "Lars", "Noor")
ACTIONS = ("Apply", "Refresh", "Preview", "Import", "Export", "Share", "Rename", "Duplicate", "Sort",
           "Filter", "Connect", "Upload", "Sync", "Compare", "Merge", "Pin", "Archive", "Tag")
OPTIONS = ("Show hidden files", "Wrap long lines", "Use dark colours", "Remember passwords",
           "Check spelling", "Play sounds", "Start at login", "Show line numbers", "Auto-save every minute",
           "Open links in new tab", "Send usage statistics", "Compress backups", "Mute notifications")
FORMATS = ("Bold", "Italic", "Underline", "Left", "Centre", "Right", "Justify", "Grid", "List", "Icons",
           "Day", "Week", "Month", "Year", "All", "Unread", "Flagged", "Small", "Medium", "Large")
