// DICOM upload page: choosing a level checks the default attributes its rows share (a file's SOP Instance
// UID is not one of a study's); submitting says that reading a large folder takes a while.
(function () {
  var data = document.getElementById("dicom-level-attributes");
  var form = document.getElementById("dicom-upload-form");
  if (!data || !form) return;
  var byLevel = JSON.parse(data.textContent);
  document.querySelectorAll("#dicom-level input[type=radio]").forEach(function (radio) {
    radio.addEventListener("change", function () {
      var wanted = byLevel[radio.value] || [];
      document.querySelectorAll("#dicom-attributes input[type=checkbox]").forEach(function (box) {
        box.checked = wanted.indexOf(box.value) >= 0;
      });
    });
  });
  form.addEventListener("submit", function () {
    document.getElementById("dicom-progress").hidden = false;
    document.getElementById("dicom-upload").disabled = true;
  });
})();
