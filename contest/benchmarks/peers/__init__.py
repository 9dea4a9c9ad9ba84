"""`contest bench peers`: the sitting (bench), its page (page) and each sitting's full
disclosure (disclosure)."""
