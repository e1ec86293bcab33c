"""What people look at: the HTML trace page (page), the explorer server (explore), graph export."""
