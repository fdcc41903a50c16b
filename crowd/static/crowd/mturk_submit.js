// The finished HIT goes back to MTurk by itself; the button stays for when scripts are off.
document.getElementById("mturk-submit")?.submit();
