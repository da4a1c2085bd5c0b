"""Per-user session objects of the web and UI frameworks: state one user's requests share, by
the qualified name of the object and how code usually spells it."""

SESSION_OBJECTS = {
    "streamlit.session_state": "st.session_state",
    "flask.session": "session",
    "quart.session": "session",
    "chainlit.user_session": "cl.user_session",
}
